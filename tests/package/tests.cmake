# SPDX-License-Identifier: MIT
# fbwire as a user gets it: the installed library and the Debian package.

# libfbwire installed into a scratch prefix: exports, headers, the C examples of README.md and
# docs/library.md built with pkg-config and find_package(fbwire) and run against FB3 and FB4.
fbw_server_test(package_library ${CMAKE_CURRENT_LIST_DIR}/library.sh ${CMAKE_BINARY_DIR})
set_tests_properties(package_library PROPERTIES LABELS integ TIMEOUT 300)

# The Debian package: `cpack -G DEB` in this build directory, then apt installs it into a fresh
# Debian 12 chroot (debootstrapped every run from the .debs cached in $FBWIRE_STATE/deb-bookworm.tgz)
# and its programs run there.
add_test(NAME package_deb
         COMMAND sh -c "cpack -G DEB >cpack.log 2>&1 || { cat cpack.log; exit 1; }; \
exec ${CMAKE_CURRENT_LIST_DIR}/install-test.sh fbwire_${PROJECT_VERSION}_amd64.deb"
         WORKING_DIRECTORY ${CMAKE_BINARY_DIR})
set_tests_properties(package_deb PROPERTIES LABELS package TIMEOUT 900)
