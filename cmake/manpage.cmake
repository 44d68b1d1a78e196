# Writes OUT, gate(1), and OUT.gz from the binary's own help (GATE: the built gate), so
# the man page can never drift from `gate --help` and `gate <command> --help`.
# Run after every link of gate (a POST_BUILD step in CMakeLists.txt).
# EMULATOR: CMAKE_CROSSCOMPILING_EMULATOR of a cross build (qemu-user, as
# cmake/aarch64-linux-gnu.cmake sets it), which runs the foreign binary.
cmake_policy(VERSION 3.20)
set(gate_cmd ${EMULATOR} "${GATE}")
function(roff_verbatim text out_var)
  # roff escapes: backslashes, and control characters at a line's start.
  string(REPLACE "\\" "\\e" text "${text}")
  string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" text "${text}")
  set(${out_var} ".nf\n${text}\n.fi\n" PARENT_SCOPE)
endfunction()

execute_process(COMMAND ${gate_cmd} --help OUTPUT_VARIABLE top RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${GATE} --help exited ${rc}")
endif()
execute_process(COMMAND ${gate_cmd} --version OUTPUT_VARIABLE version_line OUTPUT_STRIP_TRAILING_WHITESPACE)
string(REGEX MATCH "^gate ([^ ]+)" _ "${version_line}")
set(num "${CMAKE_MATCH_1}")

roff_verbatim("${top}" top_roff)
string(CONCAT page ".\\\" Generated from `gate --help` by cmake/manpage.cmake; do not edit.\n"
         ".TH GATE 1 \"\" \"gate ${num}\" \"User Commands\"\n"
         ".SH NAME\ngate \\- a regression gate for LLM and agent evaluations\n"
         ".SH SYNOPSIS\n.B gate\n.I command\n[\\fIoptions\\fR]\n"
         ".SH DESCRIPTION\n${top_roff}.SH COMMANDS\n")
# The command table of `gate --help`: two spaces, the name, its summary.
string(REGEX MATCHALL "\n  [a-z]+ " names "${top}")
foreach(n IN LISTS names)
  string(STRIP "${n}" n)
  if(n STREQUAL "help" OR n STREQUAL "version")
    continue()
  endif()
  execute_process(COMMAND ${gate_cmd} ${n} --help OUTPUT_VARIABLE sub RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${GATE} ${n} --help exited ${rc}")
  endif()
  roff_verbatim("${sub}" sub_roff)
  string(APPEND page ".SS gate ${n}\n${sub_roff}")
endforeach()
string(APPEND page ".SH ENVIRONMENT\n.TP\n.B SSL_CERT_FILE\\fR, \\fBSSL_CERT_DIR\n"
       "The TLS trust store instead of the system's (/etc/ssl/certs through OpenSSL's /usr/lib/ssl).\n"
       ".SH SEE ALSO\nThe documentation in /usr/share/doc/gate (README.md, docs/).\n")
file(WRITE "${OUT}.tmp" "${page}")
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different "${OUT}.tmp" "${OUT}")
file(REMOVE "${OUT}.tmp")
# The installed page is gzip -9n'd, as Debian policy asks (-n: no name or
# time stamp inside, so the same page gives the same bytes).
execute_process(COMMAND gzip -9n -c "${OUT}" OUTPUT_FILE "${OUT}.gz" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "gzip -9n ${OUT} exited ${rc}")
endif()
