# Writes the file IN as a C++ raw string constant kFakeSidecarScript in OUT.
file(READ ${IN} CONTENT)
file(WRITE ${OUT} "// Generated from tests/sidecars/fake_sidecar.py by embed_script.cmake.\n#pragma once\n"
  "inline constexpr const char* kFakeSidecarScript = R\"PY(${CONTENT})PY\";\n")
