# cmake -DINPUT=<file> -DOUTPUT=<file.cpp> -DSYMBOL=<name> -P EmbedFile.cmake
# Writes a C++ source defining `confine::<SYMBOL>_text[]` and `<SYMBOL>_size` with the
# file's exact bytes (plus a terminating NUL that the size does not count).
file(READ "${INPUT}" hex HEX)
string(LENGTH "${hex}" hex_len)
math(EXPR size "${hex_len} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "(0x[0-9a-f][0-9a-f],){16}" "\\0\n    " bytes "${bytes}")
file(WRITE "${OUTPUT}.tmp"
"// Generated from ${INPUT}. Do not edit.\n#include <cstddef>\nnamespace confine {\nextern const char ${SYMBOL}_text[];\nextern const std::size_t ${SYMBOL}_size;\nconst char ${SYMBOL}_text[] = {\n    ${bytes}0x00};\nconst std::size_t ${SYMBOL}_size = ${size};\n}  // namespace confine\n")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
