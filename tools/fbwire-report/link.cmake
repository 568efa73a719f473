# SPDX-License-Identifier: MIT
# fbwire-report reads JSON with jansson (the plug-in writes it with the same library) and uses libm.
pkg_check_modules(JANSSON IMPORTED_TARGET jansson)
if(JANSSON_FOUND)
  target_link_libraries(${name} PRIVATE PkgConfig::JANSSON m)
else()
  message(WARNING "jansson not found: fbwire-report is not built")
  set_target_properties(${name} PROPERTIES EXCLUDE_FROM_ALL ON)
endif()
