if(TARGET numpipe_kernels_fluid)
  numpipe_tool(fluid-step SOURCES fluid-step.cpp LIBS numpipe_kernels_fluid)
endif()
