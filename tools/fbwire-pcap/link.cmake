# SPDX-License-Identifier: MIT
# fbwire-pcap reads captures through libpcap (found by the top-level CMakeLists.txt).
target_link_libraries(${name} PRIVATE PkgConfig::PCAP)
