# Writes OUT_DIR/copyright (machine-readable, DEP-5) and OUT_DIR/changelog.gz
# (a native package's one entry, gzip -9n), the two files Debian policy asks
# of every package under /usr/share/doc/<package>. Run after every link of
# gate, as the man page is, so the changelog's date is the commit's: the
# date of HEAD's commit, or SOURCE_DATE_EPOCH when set (a release build
# sets it, so two builds of one commit give the same bytes).
# VERSION, MAINTAINER, SRC: from CMakeLists.txt.
cmake_policy(VERSION 3.20)
if(NOT DEFINED ENV{SOURCE_DATE_EPOCH})
  execute_process(COMMAND git -C "${SRC}" log -1 --format=%ct OUTPUT_VARIABLE epoch
                  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0 OR NOT epoch MATCHES "^[0-9]+$")
    set(epoch 0) # a source tree without git: 1970, but the same bytes every time
  endif()
  set(ENV{SOURCE_DATE_EPOCH} "${epoch}")
endif()
# string(TIMESTAMP) takes SOURCE_DATE_EPOCH instead of the clock.
string(TIMESTAMP date "%a, %d %b %Y %H:%M:%S +0000" UTC)
string(TIMESTAMP year "%Y" UTC)

file(MAKE_DIRECTORY "${OUT_DIR}")
string(CONCAT copyright
       "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n"
       "Upstream-Name: gate\n"
       "Source: https://github.com/gate-eval/gate\n\n"
       "Files: *\n"
       "Copyright: ${year} gate maintainers\n"
       "License: Apache-2.0\n\n"
       "License: Apache-2.0\n"
       " Licensed under the Apache License, Version 2.0 (the \"License\"); you may\n"
       " not use this file except in compliance with the License. You may obtain a\n"
       " copy of the License at\n"
       " .\n"
       "     http://www.apache.org/licenses/LICENSE-2.0\n"
       " .\n"
       " Unless required by applicable law or agreed to in writing, software\n"
       " distributed under the License is distributed on an \"AS IS\" BASIS, WITHOUT\n"
       " WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the\n"
       " License for the specific language governing permissions and limitations\n"
       " under the License.\n"
       " .\n"
       " On Debian systems, the complete text of the Apache License, Version 2.0\n"
       " can be found in /usr/share/common-licenses/Apache-2.0.\n")
file(WRITE "${OUT_DIR}/copyright.tmp" "${copyright}")
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different "${OUT_DIR}/copyright.tmp" "${OUT_DIR}/copyright")
file(REMOVE "${OUT_DIR}/copyright.tmp")

string(CONCAT changelog
       "gate (${VERSION}) unstable; urgency=medium\n\n"
       "  * gate ${VERSION}: see README.md and docs/ in /usr/share/doc/gate.\n\n"
       " -- ${MAINTAINER}  ${date}\n")
file(WRITE "${OUT_DIR}/changelog" "${changelog}")
execute_process(COMMAND gzip -9n -c "${OUT_DIR}/changelog" OUTPUT_FILE "${OUT_DIR}/changelog.gz" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "gzip -9n ${OUT_DIR}/changelog exited ${rc}")
endif()
