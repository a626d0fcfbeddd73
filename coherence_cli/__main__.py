"""``python -m coherence_cli``: the same as the ``coherence`` command."""

import sys

from coherence_cli import main

sys.exit(main())
