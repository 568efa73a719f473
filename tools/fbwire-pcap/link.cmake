# SPDX-License-Identifier: MIT
# fbwire-pcap reads captures through libpcap (found by the top-level CMakeLists.txt).
target_link_libraries(${name} PRIVATE PkgConfig::PCAP)
# replay runs one thread per replayed connection (replay_threads.c).
find_package(Threads REQUIRED)
target_link_libraries(${name} PRIVATE Threads::Threads)
# Its JSON reports are built with jansson (jsonout.h), like the plug-in's; libm rounds their figures.
pkg_check_modules(JANSSON IMPORTED_TARGET jansson)
if(JANSSON_FOUND)
  target_link_libraries(${name} PRIVATE PkgConfig::JANSSON m)
else()
  message(WARNING "jansson not found: fbwire-pcap is not built")
  set_target_properties(${name} PROPERTIES EXCLUDE_FROM_ALL ON)
endif()
