# SPDX-License-Identifier: MIT
# fbwire-cpu writes its --json file with jansson, like the plug-in's reports.
pkg_check_modules(JANSSON IMPORTED_TARGET jansson)
if(JANSSON_FOUND)
  target_compile_definitions(${name} PRIVATE FBW_HAVE_JANSSON)
  target_link_libraries(${name} PRIVATE PkgConfig::JANSSON)
endif()
