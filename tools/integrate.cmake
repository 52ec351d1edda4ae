if(TARGET numpipe_kernels_integrate)
  numpipe_tool(integrate SOURCES integrate.cpp LIBS numpipe_kernels_integrate)
endif()
