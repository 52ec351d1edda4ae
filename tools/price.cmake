if(TARGET numpipe_kernels_price)
  numpipe_tool(price SOURCES price.cpp LIBS numpipe_kernels_price)
endif()
