# confine_add_runner_plugin(<runner> SOURCES <src>...
#                           [TARGET <target>] [VERSION <version>] [DEFINITIONS <def>...]
#                           [OUTPUT_DIRECTORY <dir>]
#                           [INSTALL_INTO_CONFINE | INSTALL_DESTINATION <dir> | NO_INSTALL]
#                           [EXPORT_RUNTIME])
#
# Declares a runner plugin: a loadable module named confine-runner-<runner>.so (.dylib,
# .dll) with hidden visibility, built against the SDK only (confine::sdk), carrying its
# own C++ runtime, exporting the two symbols the host looks for and nothing else.
#
#   <runner>             the runner's name, as a chain names it; the file is
#                        confine-runner-<runner> and must match the name the plugin's
#                        CONFINE_RUNNER_PLUGIN declares
#   SOURCES <src>...     the plugin's sources (required)
#   TARGET <target>      the CMake target's name; default confine-runner-<runner>
#   VERSION <version>    the plugin's version, compiled in as the string
#                        CONFINE_PLUGIN_VERSION (for CONFINE_RUNNER_PLUGIN); default the
#                        declaring project's version (project(... VERSION x.y.z)). A
#                        configure error when both are empty. Letters, digits and . + - _ ~
#   DEFINITIONS <def>... further compile definitions for the plugin's sources (NAME or
#                        NAME=VALUE, as target_compile_definitions takes them)
#   OUTPUT_DIRECTORY <dir>  where the build puts the file; default the current binary
#                        directory (in confine's own tree: the build's plugin directory)
#   INSTALL_INTO_CONFINE the default: install into the plugin directory of the confine found
#                        by find_package(confine) (CONFINE_PLUGIN_DIR, absolute, whatever the
#                        installing prefix), where that confine looks for plugins
#   INSTALL_DESTINATION <dir>  where `cmake --install` puts it instead: relative to the
#                        installing prefix (CMAKE_INSTALL_PREFIX, or --prefix), or absolute;
#                        list that directory in the configuration's plugin_dirs, or confine
#                        does not look there. A package of the plugin (cpack, a distribution's
#                        build) names its distribution's plugin directory here, relative
#   NO_INSTALL           no install rule
#   EXPORT_RUNTIME       export more than the two symbols: the static C++ runtime's, and
#                        whatever else the sources make visible (by default a version
#                        script, on ELF systems, keeps the dynamic symbol table to the two)
#
# Inside confine's own tree, confine's plugin directory is CONFINE_PLUGIN_INSTALL_DIR,
# relative to confine's prefix.
include_guard(GLOBAL)
include(GNUInstallDirs)

function(confine_add_runner_plugin runner)
  cmake_parse_arguments(ARG "NO_INSTALL;INSTALL_INTO_CONFINE;EXPORT_RUNTIME"
                        "OUTPUT_DIRECTORY;TARGET;VERSION;INSTALL_DESTINATION" "SOURCES;DEFINITIONS" ${ARGN})
  set(where "confine_add_runner_plugin(${runner})")
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "${where}: unknown arguments: ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "${where}: SOURCES is required")
  endif()
  set(install_choices 0)
  foreach(choice IN ITEMS ARG_NO_INSTALL ARG_INSTALL_INTO_CONFINE ARG_INSTALL_DESTINATION)
    if(${choice})
      math(EXPR install_choices "${install_choices} + 1")
    endif()
  endforeach()
  if(install_choices GREATER 1)
    message(FATAL_ERROR "${where}: INSTALL_DESTINATION, INSTALL_INTO_CONFINE and NO_INSTALL exclude one another")
  endif()

  set(version "${ARG_VERSION}")
  if(version STREQUAL "")
    set(version "${PROJECT_VERSION}")
  endif()
  if(version STREQUAL "")
    message(FATAL_ERROR "${where}: the plugin has no version: give the project one "
                        "(project(${PROJECT_NAME} VERSION 1.0.0)) or pass VERSION")
  endif()
  if(NOT version MATCHES "^[0-9A-Za-z.+~_-]+$")
    message(FATAL_ERROR "${where}: VERSION '${version}' may hold only letters, digits and . + - _ ~")
  endif()

  if(NOT ARG_TARGET)
    set(ARG_TARGET "confine-runner-${runner}")
  endif()
  if(NOT ARG_OUTPUT_DIRECTORY)
    if(DEFINED CONFINE_PLUGIN_OUTPUT_DIR)
      set(ARG_OUTPUT_DIRECTORY "${CONFINE_PLUGIN_OUTPUT_DIR}")
    else()
      set(ARG_OUTPUT_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}")
    endif()
  endif()
  # By default into the plugin directory of the confine it is built for, where that
  # confine looks: an installation elsewhere would be found by nothing.
  if(NOT ARG_INSTALL_DESTINATION AND NOT ARG_NO_INSTALL)
    set(ARG_INSTALL_INTO_CONFINE ON)
  endif()
  if(ARG_INSTALL_INTO_CONFINE)
    if(DEFINED CONFINE_PLUGIN_INSTALL_DIR)
      set(ARG_INSTALL_DESTINATION "${CONFINE_PLUGIN_INSTALL_DIR}")  # one of confine's own plugins
    elseif(CONFINE_PLUGIN_DIR)
      set(ARG_INSTALL_DESTINATION "${CONFINE_PLUGIN_DIR}")
    else()
      message(FATAL_ERROR "${where}: no plugin directory to install into: CONFINE_PLUGIN_DIR is not set "
                          "(find_package(confine) sets it); pass INSTALL_DESTINATION or NO_INSTALL")
    endif()
  endif()
  set(static_runtime ON)
  if(DEFINED CONFINE_STATIC_RUNTIME)
    set(static_runtime ${CONFINE_STATIC_RUNTIME})
  endif()
  add_library(${ARG_TARGET} MODULE ${ARG_SOURCES})
  target_link_libraries(${ARG_TARGET} PRIVATE confine::sdk)
  target_compile_definitions(${ARG_TARGET} PRIVATE CONFINE_PLUGIN_VERSION="${version}" ${ARG_DEFINITIONS})
  set(suffix "${CMAKE_SHARED_MODULE_SUFFIX}")
  if(APPLE)
    set(suffix ".dylib")
  endif()
  set_target_properties(${ARG_TARGET} PROPERTIES
    PREFIX ""
    OUTPUT_NAME "confine-runner-${runner}"
    SUFFIX "${suffix}"
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON
    LIBRARY_OUTPUT_DIRECTORY "${ARG_OUTPUT_DIRECTORY}")
  if(static_runtime AND NOT APPLE AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    # The boundary is C, so a plugin can carry its own C++ runtime and load fast.
    # --exclude-libs keeps the runtime's own symbols out of the dynamic symbol table:
    # the plugin exports its two symbols and nothing else, and loads faster.
    target_link_options(${ARG_TARGET} PRIVATE -static-libstdc++ -static-libgcc -Wl,--no-undefined)
    if(NOT ARG_EXPORT_RUNTIME)
      target_link_options(${ARG_TARGET} PRIVATE -Wl,--exclude-libs,ALL)
    endif()
  endif()
  if(NOT ARG_EXPORT_RUNTIME AND NOT APPLE AND NOT WIN32)
    # Hidden visibility does not reach what the C++ headers declare visible themselves
    # (std::to_string's digit table, a unique symbol): a version script keeps the
    # dynamic symbol table to the two symbols the host looks for.
    set(exports "${CMAKE_BINARY_DIR}/confine-plugin-exports.map")
    file(CONFIGURE OUTPUT "${exports}" CONTENT "{\n  global: confine_plugin_abi; confine_plugin;\n  local: *;\n};\n")
    target_link_options(${ARG_TARGET} PRIVATE "LINKER:--version-script=${exports}")
    set_property(TARGET ${ARG_TARGET} APPEND PROPERTY LINK_DEPENDS "${exports}")
  endif()
  if(NOT ARG_NO_INSTALL)
    # Installed as code: confine refuses a plugin file without its execute permission.
    install(TARGETS ${ARG_TARGET} LIBRARY DESTINATION "${ARG_INSTALL_DESTINATION}"
            PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
  endif()
endfunction()

# confine_add_plugin_test(<name> SOURCES <src>...
#                         [PLUGIN <target>] [LIBRARIES <lib>...] [DEFINITIONS <def>...]
#                         [ARGS <arg>...] [NO_TEST])
#
# Declares a runner plugin's unit test: an executable <name>, built against the SDK
# (confine::sdk, whose confine/sdk/testing.hpp gives the fake host and
# check_wrap_result), run by CTest as the test <name> (enable_testing() first). The test
# compiles the runner's code itself (a class private to its source file: `#include
# "my_runner.cpp"`), so it needs no confine at run time and spawns nothing.
#
#   <name>               the executable's target and the CTest test's name
#   SOURCES <src>...     the test's sources (required)
#   PLUGIN <target>      the plugin target confine_add_runner_plugin declared: the test is
#                        compiled as that plugin is (its compile definitions, such as
#                        CONFINE_PLUGIN_VERSION, and its include directories), with the
#                        directories of the plugin's sources on its include path and the
#                        libraries the plugin links; CONFINE_PLUGIN_FILE is defined to the built
#                        plugin's path (for a test that hands it to confinectl --plugin)
#   LIBRARIES <lib>...   further libraries, such as a test framework's main
#                        (Catch2::Catch2WithMain, GTest::gtest_main)
#   DEFINITIONS <def>... further compile definitions (NAME or NAME=VALUE)
#   ARGS <arg>...        the test's command-line arguments
#   NO_TEST              the executable only, no CTest test
#
# CONFINECTL is defined to the installation's confinectl where the package has one
# (confine::confinectl). An exit status of 77 is a skipped test.
function(confine_add_plugin_test name)
  cmake_parse_arguments(ARG "NO_TEST" "PLUGIN" "SOURCES;LIBRARIES;DEFINITIONS;ARGS" ${ARGN})
  set(where "confine_add_plugin_test(${name})")
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "${where}: unknown arguments: ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "${where}: SOURCES is required")
  endif()
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE confine::sdk ${ARG_LIBRARIES})
  target_compile_definitions(${name} PRIVATE ${ARG_DEFINITIONS})
  if(ARG_PLUGIN)
    if(NOT TARGET ${ARG_PLUGIN})
      message(FATAL_ERROR "${where}: PLUGIN ${ARG_PLUGIN} is not a target (declare it with confine_add_runner_plugin first)")
    endif()
    # The directories of the plugin's sources, so that the test includes them by name.
    get_target_property(plugin_source_dir ${ARG_PLUGIN} SOURCE_DIR)
    get_target_property(plugin_sources ${ARG_PLUGIN} SOURCES)
    set(source_dirs "")
    foreach(source IN LISTS plugin_sources)
      cmake_path(ABSOLUTE_PATH source BASE_DIRECTORY "${plugin_source_dir}" OUTPUT_VARIABLE absolute)
      cmake_path(GET absolute PARENT_PATH source_dir)
      list(APPEND source_dirs "${source_dir}")
    endforeach()
    list(REMOVE_DUPLICATES source_dirs)
    target_include_directories(${name} PRIVATE ${source_dirs} "$<TARGET_PROPERTY:${ARG_PLUGIN},INCLUDE_DIRECTORIES>")
    target_compile_definitions(${name} PRIVATE "$<TARGET_PROPERTY:${ARG_PLUGIN},COMPILE_DEFINITIONS>"
                               CONFINE_PLUGIN_FILE="$<TARGET_FILE:${ARG_PLUGIN}>")
    target_link_libraries(${name} PRIVATE "$<TARGET_PROPERTY:${ARG_PLUGIN},LINK_LIBRARIES>")
    add_dependencies(${name} ${ARG_PLUGIN})
  endif()
  if(TARGET confine::confinectl)
    target_compile_definitions(${name} PRIVATE CONFINECTL="$<TARGET_FILE:confine::confinectl>")
  endif()
  if(NOT ARG_NO_TEST)
    add_test(NAME ${name} COMMAND ${name} ${ARG_ARGS})
    set_tests_properties(${name} PROPERTIES SKIP_RETURN_CODE 77)
  endif()
endfunction()
