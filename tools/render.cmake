# render: PNG images of stream arrays (libpng; built only where it is found).
if(TARGET PNG::PNG)
  numpipe_tool(render SOURCES render.cpp LIBS PNG::PNG)
endif()
