# render: pictures (libpng; built only where it is found), animated GIFs (giflib,
# Debian libgif-dev: optional, -o *.gif then says what to install), MP4 through
# the ffmpeg program at run time. Text in DejaVu Sans through FreeType and Cairo,
# which also write PDF and SVG (Debian libcairo2-dev and fonts-dejavu-core:
# optional; without them text is drawn in a 5x7 bitmap font and -o *.pdf says
# what to install). It reads axes and coordinates with nps-export's dataset library.
if(TARGET PNG::PNG AND TARGET numpipe_export)
  find_package(GIF QUIET)
  find_package(PkgConfig QUIET)
  if(PkgConfig_FOUND)
    pkg_check_modules(NUMPIPE_CAIRO QUIET IMPORTED_TARGET cairo cairo-ft cairo-pdf cairo-svg freetype2)
  endif()
  find_file(NUMPIPE_RENDER_FONT DejaVuSans.ttf
            PATHS /usr/share/fonts/truetype/dejavu /usr/share/fonts/dejavu /usr/share/fonts/TTF /usr/local/share/fonts
            NO_DEFAULT_PATH DOC "render's font (Debian fonts-dejavu-core)")
  add_library(numpipe_render STATIC render/canvas.cpp render/encode.cpp render/field.cpp render/picture.cpp render/plot.cpp render/text.cpp
                                    render/vector.cpp)
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
  if(NUMPIPE_CAIRO_FOUND AND NUMPIPE_RENDER_FONT)
    target_compile_definitions(numpipe_render PUBLIC NUMPIPE_HAVE_CAIRO=1 PRIVATE NUMPIPE_RENDER_FONT="${NUMPIPE_RENDER_FONT}")
    target_link_libraries(numpipe_render PRIVATE PkgConfig::NUMPIPE_CAIRO)
    message(STATUS "numpipe: render draws text in ${NUMPIPE_RENDER_FONT} (Cairo ${NUMPIPE_CAIRO_cairo_VERSION}) and writes PDF and SVG")
  elseif(NUMPIPE_CAIRO_FOUND)
    message(STATUS "numpipe: no DejaVuSans.ttf (fonts-dejavu-core): render draws text in its 5x7 bitmap font, without PDF")
  else()
    message(STATUS "numpipe: no Cairo (libcairo2-dev, fonts-dejavu-core): render draws text in its 5x7 bitmap font, without PDF")
  endif()
  numpipe_tool(render SOURCES render.cpp LIBS numpipe_render)
endif()
