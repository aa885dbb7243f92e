# test/zoo/flavors.sh - the builds of the zoo: how each distribution or
# toolchain compiles the PostgreSQL server that users of it run.  Sourced by
# test/suite-zoo.sh (on the host) and test/zoo/build-server.sh (where the
# build runs: the host for 15, the version's chroot for 17 and 18).
#
# A flavor is a compiler and its flags, copied from the distribution's
# build (the issue that asked for the zoo lists where each comes from):
#   ubuntu-lto  Ubuntu 24.04's dpkg-buildflags for postgresql-NN (and the
#               PGDG packages for Ubuntu): gcc, -O2, LTO with fat objects,
#               frame pointers kept, CET (-fcf-protection)
#   el9-lto     the PGDG RPMs for EL9 / Rocky 9 (redhat-rpm-config's
#               optflags): gcc, -O2, LTO, -march=x86-64-v2, no frame
#               pointers, _FORTIFY_SOURCE and _GLIBCXX_ASSERTIONS
#   el8         EL8's optflags: el9-lto without LTO and without -march
#   gcc-o3      Debian's flags at -O3 (a from-source build "for speed")
#   clang       clang at -O2, as NixOS and FreeBSD's ports build it, with
#               the clang of the LLVM the server's JIT links
# Not copied: RHEL's -specs=redhat-hardened-cc1 and annobin plugin (gcc
# here defaults to PIE, which is what the hardened spec asks for), and
# --enable-dtrace (its probes are in the buffer manager and locks, not in
# the code the module reads).

ZOO_FLAVORS=(ubuntu-lto el9-lto el8 gcc-o3 clang)

# zoo_flavor FLAVOR LLVM_MAJOR - set ZOO_CC, ZOO_CFLAGS, ZOO_LDFLAGS,
# ZOO_DESCRIPTION and ZOO_REFUSAL for FLAVOR; returns 1 for an unknown
# flavor.  ZOO_REFUSAL is empty where the module must be active, and
# otherwise the start of the only start-up refusal the build may have
# instead: clang inlines _bt_binsrch into both of its callers, leaving no
# function to redirect (src/README, "Builds other than Debian's").
zoo_flavor() {
	local flavor=$1 llvm=${2:-}
	local el_common="-O2 -fexceptions -g -grecord-gcc-switches -pipe -Wall -Werror=format-security -Wp,-D_FORTIFY_SOURCE=2 -Wp,-D_GLIBCXX_ASSERTIONS -fstack-protector-strong -m64 -mtune=generic -fasynchronous-unwind-tables -fstack-clash-protection -fcf-protection"
	ZOO_CC=gcc
	ZOO_REFUSAL=
	case $flavor in
	ubuntu-lto)
		ZOO_CFLAGS="-g -O2 -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -flto=auto -ffat-lto-objects -fstack-protector-strong -fstack-clash-protection -Wformat -Werror=format-security -fcf-protection"
		ZOO_LDFLAGS="-flto=auto -Wl,-Bsymbolic-functions -Wl,-z,relro -Wl,-z,now"
		ZOO_DESCRIPTION="Ubuntu 24.04: gcc -O2, LTO, frame pointers"
		;;
	el9-lto)
		ZOO_CFLAGS="$el_common -flto=auto -ffat-lto-objects -march=x86-64-v2"
		ZOO_LDFLAGS="-flto=auto -Wl,-z,relro -Wl,--as-needed -Wl,-z,now"
		ZOO_DESCRIPTION="EL9 PGDG: gcc -O2, LTO, x86-64-v2, no frame pointers"
		;;
	el8)
		ZOO_CFLAGS="$el_common"
		ZOO_LDFLAGS="-Wl,-z,relro -Wl,--as-needed -Wl,-z,now"
		ZOO_DESCRIPTION="EL8 PGDG: gcc -O2, no LTO, no frame pointers"
		;;
	gcc-o3)
		ZOO_CFLAGS="-g -O3 -fno-omit-frame-pointer -fstack-protector-strong -Wformat -Werror=format-security"
		ZOO_LDFLAGS="-Wl,-z,relro -Wl,-z,now"
		ZOO_DESCRIPTION="gcc -O3, frame pointers"
		;;
	clang)
		[[ -n $llvm ]] || return 1
		ZOO_CC=clang-$llvm
		ZOO_CFLAGS="-g -O2"
		ZOO_LDFLAGS=""
		ZOO_DESCRIPTION="clang-$llvm -O2"
		ZOO_REFUSAL="_bt_binsrch not identified: no non-exported function is called from both _bt_search"
		;;
	*)
		return 1
		;;
	esac
}
