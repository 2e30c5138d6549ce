# confine_add_runner_plugin(<runner> SOURCES <src>... [OUTPUT_DIRECTORY <dir>]
#                           [INSTALL_DESTINATION <dir>] [NO_INSTALL] [EXPORT_RUNTIME])
#
# Declares a runner plugin: a loadable module named confine-runner-<runner>.so
# (.dylib, .dll) with hidden visibility, built against the SDK only, carrying its own
# C++ runtime. CONFINE_VERSION is defined to the declaring project's version.
# Installed into INSTALL_DESTINATION — by default confine's own plugin directory
# (in confine's tree, or CONFINE_PLUGIN_DIR of an installed confine).
function(confine_add_runner_plugin runner)
  cmake_parse_arguments(ARG "NO_INSTALL;EXPORT_RUNTIME" "OUTPUT_DIRECTORY;TARGET;INSTALL_DESTINATION" "SOURCES;DEFINITIONS" ${ARGN})
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
  if(NOT ARG_INSTALL_DESTINATION)
    if(DEFINED CONFINE_PLUGIN_INSTALL_DIR)
      set(ARG_INSTALL_DESTINATION "${CONFINE_PLUGIN_INSTALL_DIR}")
    else()
      set(ARG_INSTALL_DESTINATION "${CONFINE_PLUGIN_DIR}")
    endif()
  endif()
  set(static_runtime ON)
  if(DEFINED CONFINE_STATIC_RUNTIME)
    set(static_runtime ${CONFINE_STATIC_RUNTIME})
  endif()
  add_library(${ARG_TARGET} MODULE ${ARG_SOURCES})
  target_link_libraries(${ARG_TARGET} PRIVATE confine::sdk)
  target_compile_definitions(${ARG_TARGET} PRIVATE CONFINE_VERSION="${PROJECT_VERSION}" ${ARG_DEFINITIONS})
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
  if(NOT ARG_NO_INSTALL)
    # Installed as code: confine refuses a plugin file without its execute permission.
    install(TARGETS ${ARG_TARGET} LIBRARY DESTINATION "${ARG_INSTALL_DESTINATION}"
            PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
  endif()
endfunction()
