# render: pictures (libpng; built only where it is found), animated GIFs (giflib,
# Debian libgif-dev: optional, -o *.gif then says what to install), MP4 through
# the ffmpeg program at run time. It reads axes and coordinates with nps-export's
# dataset library.
if(TARGET PNG::PNG AND TARGET numpipe_export)
  find_package(GIF QUIET)
  add_library(numpipe_render STATIC render/canvas.cpp render/encode.cpp render/field.cpp render/plot.cpp)
  target_include_directories(numpipe_render PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})
  target_link_libraries(numpipe_render PUBLIC numpipe_common numpipe_export PNG::PNG PRIVATE numpipe_warnings)
  if(GIF_FOUND)
    target_compile_definitions(numpipe_render PRIVATE NUMPIPE_HAVE_GIF=1)
    target_include_directories(numpipe_render PRIVATE ${GIF_INCLUDE_DIRS})
    target_link_libraries(numpipe_render PUBLIC ${GIF_LIBRARIES})
    message(STATUS "numpipe: render writes GIFs (${GIF_LIBRARIES})")
  else()
    message(STATUS "numpipe: no giflib (libgif-dev): render -o *.gif will say so")
  endif()
  numpipe_tool(render SOURCES render.cpp LIBS numpipe_render)
endif()
