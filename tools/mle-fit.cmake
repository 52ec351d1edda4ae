if(TARGET numpipe_kernels_mle)
  numpipe_tool(mle-fit SOURCES mle-fit.cpp LIBS numpipe_kernels_mle)
endif()
