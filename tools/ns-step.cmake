if(TARGET numpipe_kernels_ns)
  numpipe_tool(ns-step SOURCES ns-step.cpp LIBS numpipe_kernels_ns)
endif()
