# Run by `cmake --install` after numpipe.py is installed: when Debian's python3 does not
# search the folder it went to (any prefix but /usr: Debian's python3 looks in
# /usr/lib/python3/dist-packages and /usr/local/lib/python3.X/dist-packages), say so and
# how to reach it. NUMPIPE_PYTHON_INSTALL_DIR is set by the install(CODE) before this.
set(numpipe_py_dir "${CMAKE_INSTALL_PREFIX}/${NUMPIPE_PYTHON_INSTALL_DIR}")
find_program(numpipe_python3 NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
if(numpipe_python3)
  execute_process(COMMAND "${numpipe_python3}" -c
    "import os, sys; d = os.path.realpath(sys.argv[1]); print(any(os.path.realpath(p) == d for p in sys.path))"
    "${numpipe_py_dir}" OUTPUT_VARIABLE numpipe_py_seen OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(NOT numpipe_py_seen STREQUAL "True")
    message(NOTICE "numpipe: the Python module numpipe.py is in ${numpipe_py_dir}, where ${numpipe_python3} "
                   "does not look: use PYTHONPATH=${numpipe_py_dir}, or install with --prefix /usr, or "
                   "pip install ./share/python into a virtual environment (docs/python.md)")
  endif()
endif()
