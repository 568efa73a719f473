# SPDX-License-Identifier: MIT
# fbwire-pcap reads captures through libpcap (found by the top-level CMakeLists.txt).
target_link_libraries(${name} PRIVATE PkgConfig::PCAP)
# replay runs one thread per replayed connection (replay.c).
find_package(Threads REQUIRED)
target_link_libraries(${name} PRIVATE Threads::Threads)
