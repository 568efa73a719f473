# SPDX-License-Identifier: MIT
# fbwire-cpu writes its --json file with jansson, like the plug-in's reports.
pkg_check_modules(JANSSON IMPORTED_TARGET jansson)
if(JANSSON_FOUND)
  target_compile_definitions(${name} PRIVATE FBW_HAVE_JANSSON)
  target_link_libraries(${name} PRIVATE PkgConfig::JANSSON)
endif()
# fbwire-cpu reads the local servers' CPU (measure/srvcpu.h).
target_link_libraries(${name} PRIVATE fbwire_measure)
