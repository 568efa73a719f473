# SPDX-License-Identifier: MIT
# pipeline mode reads the server's CPU (measure/srvcpu.h).
target_link_libraries(${name} PRIVATE fbwire_measure)
