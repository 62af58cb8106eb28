# Precompiled headers for the targets whose files all start by parsing the same large headers
# (Qt's, QCustomPlot's): matmulviz_precompile(TARGET HEADER...) compiles HEADER once per target.
# Measured on the 2-core machine: a chart file spent about 20 s of its 23 s parsing qcustomplot.h
# and the Qt modules it includes. MATMULVIZ_PCH=OFF turns them off (e.g. to check that every file
# includes what it uses).
option(MATMULVIZ_PCH "Precompile the Qt and QCustomPlot headers of the UI libraries and tests" ON)

function(matmulviz_precompile target)
  if(NOT MATMULVIZ_PCH)
    return()
  endif()
  target_precompile_headers(${target} PRIVATE ${ARGN})
  # ccache caches files built with a precompiled header only when the compiler is told to
  # preprocess through it (GCC and Clang: -fpch-preprocess; the sloppiness is set by the
  # launcher, CMakeLists.txt).
  if(CMAKE_CXX_COMPILER_LAUNCHER AND CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(${target} PRIVATE -fpch-preprocess)
  endif()
endfunction()
