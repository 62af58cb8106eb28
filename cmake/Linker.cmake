# Link with LLVM's lld when the compiler accepts it (Debian's `lld`, installed by scripts/setup):
# about 2.7 times faster than GNU ld on our test executables, which scripts/test links twice
# (release and sanitizer builds). Falls back to the default linker otherwise.
include(CheckLinkerFlag)
check_linker_flag(CXX "-fuse-ld=lld" MATMULVIZ_HAVE_LLD)
if(MATMULVIZ_HAVE_LLD)
  add_link_options($<$<LINK_LANGUAGE:CXX>:-fuse-ld=lld>)
endif()
