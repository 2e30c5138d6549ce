# For a cross build (Windows with mingw-w64): the header-only libraries confine uses,
# taken from the build machine's own packages (/usr/include), under the imported target
# names find_package would give. Only these directories are exposed, never the build
# machine's C library headers. Nothing is downloaded.
set(host_headers "${CMAKE_BINARY_DIR}/host-headers")
file(MAKE_DIRECTORY "${host_headers}")
foreach(dir boost toml++ nlohmann spdlog fmt catch2)
  if(NOT EXISTS "/usr/include/${dir}")
    message(FATAL_ERROR "/usr/include/${dir} is missing: install the Debian package that provides it (scripts/install-deps)")
  endif()
  if(NOT EXISTS "${host_headers}/${dir}")
    file(CREATE_LINK "/usr/include/${dir}" "${host_headers}/${dir}" SYMBOLIC)
  endif()
endforeach()

foreach(target Boost::headers tomlplusplus::tomlplusplus spdlog::spdlog_header_only fmt::fmt-header-only
               nlohmann_json::nlohmann_json Catch2::Catch2)
  add_library(${target} INTERFACE IMPORTED GLOBAL)
  set_target_properties(${target} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${host_headers}"
                                             INTERFACE_SYSTEM_INCLUDE_DIRECTORIES "${host_headers}")
endforeach()
# Catch's CTest integration (catch_discover_tests), from the build machine's package.
list(APPEND CMAKE_MODULE_PATH /usr/lib/cmake/Catch2)
