# cmake -DINPUT=<file> -DOUTPUT=<file.cpp> -DSYMBOL=<name> [-DBLANK_COMMENT_LINES=ON] -P EmbedFile.cmake
# Writes a C++ source defining `confine::<SYMBOL>_text[]` and `<SYMBOL>_size` with the
# file's exact bytes (plus a terminating NUL that the size does not count). With
# BLANK_COMMENT_LINES, each line whose first character other than a space or a tab is
# '#' (a TOML comment line) is left empty: every other line, and so every line and
# column number, stays as it is.
set(source "${INPUT}")
if(BLANK_COMMENT_LINES)
  set(source "${INPUT}, its comment lines left empty")
  file(READ "${INPUT}" text)
  string(REGEX REPLACE "^[ \t]*#[^\n]*" "" text "${text}")
  string(REGEX REPLACE "\n[ \t]*#[^\n]*" "\n" text "${text}")
  file(WRITE "${OUTPUT}.src" "${text}")
  set(INPUT "${OUTPUT}.src")
endif()
file(READ "${INPUT}" hex HEX)
string(LENGTH "${hex}" hex_len)
math(EXPR size "${hex_len} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "(0x[0-9a-f][0-9a-f],){16}" "\\0\n    " bytes "${bytes}")
file(WRITE "${OUTPUT}.tmp"
"// Generated from ${source}. Do not edit.\n#include <cstddef>\nnamespace confine {\nextern const char ${SYMBOL}_text[];\nextern const std::size_t ${SYMBOL}_size;\nconst char ${SYMBOL}_text[] = {\n    ${bytes}0x00};\nconst std::size_t ${SYMBOL}_size = ${size};\n}  // namespace confine\n")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
if(BLANK_COMMENT_LINES)
  file(REMOVE "${OUTPUT}.src")
endif()
