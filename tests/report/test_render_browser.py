"""The HTML report in a real browser: nothing wider than a printed page.

Headless Chromium (Debian's ``chromium`` package) lays the report out at the
width of an A4 page's printable area (182 mm = 688 CSS px) and reports every
element whose right edge passes it. Skipped when Chromium is not installed.
"""

import json
import re
import shutil
import subprocess

import pytest

import coherence

CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")
                 if shutil.which(n)), None)
PRINT_WIDTH_PX = 688

PROBE = """<script>
(function () {
  var w = document.documentElement.clientWidth, bad = [];
  document.querySelectorAll('body *').forEach(function (el) {
    var r = el.getBoundingClientRect();
    if (r.width > 0 && r.right > w + 0.5) bad.push(el.tagName + ' ' + Math.round(r.right));
  });
  var out = document.createElement('pre');
  out.id = 'overflow-probe';
  out.textContent = JSON.stringify({width: w, scroll: document.documentElement.scrollWidth,
                                    bad: bad.slice(0, 10)});
  document.body.appendChild(out);
})();
</script>"""


@pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium is not installed")
def test_report_fits_a_printed_page(tmp_path):
    import pandas as pd

    parts = [coherence.simulate(agent, n_contexts=30, n_repetitions=2,
                                prompts=coherence.PROMPTS, rng=i).data.assign(model=name)
             for i, (agent, name) in enumerate((("rational", "rational-agent"),
                                                ("nonmonotone", "nonmonotone-agent")))]
    data = pd.concat(parts, ignore_index=True)
    rep = coherence.report(data, by="model", progress=False, rng=0, n_permutations=19,
                           n_resamples=19, tests=["ci", "monotonicity", "prompt_consistency",
                                                  "calibration"])
    page = rep.to_html().replace("</body>", PROBE + "</body>")
    path = tmp_path / "report.html"
    path.write_text(page, encoding="utf-8")
    out = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
         f"--window-size={PRINT_WIDTH_PX},1000", "--dump-dom", path.as_uri()],
        capture_output=True, text=True, timeout=120)
    found = re.search(r'<pre id="overflow-probe">(.*?)</pre>', out.stdout, re.S)
    assert found, out.stderr[-2000:]
    probe = json.loads(found.group(1).replace("&quot;", '"'))
    assert probe["width"] <= PRINT_WIDTH_PX
    assert probe["bad"] == [], probe
    assert probe["scroll"] <= probe["width"], probe
