# SPDX-License-Identifier: MIT
# fbwire-link writes its --json summaries and --fault-log lines with jansson, like the plug-in.
pkg_check_modules(JANSSON IMPORTED_TARGET jansson)
if(JANSSON_FOUND)
  target_link_libraries(${name} PRIVATE PkgConfig::JANSSON)
else()
  message(WARNING "jansson not found: fbwire-link is not built")
  set_target_properties(${name} PROPERTIES EXCLUDE_FROM_ALL ON)
endif()
