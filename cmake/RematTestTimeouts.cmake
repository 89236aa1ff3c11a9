# remat_default_test_timeout(SECONDS): gives every test registered so far in the calling directory that has no
# TIMEOUT of its own this one, so that no test can hang CI (CTest's default is 1500 s, or none). Call it at the
# end of a CMakeLists.txt that registers tests with add_test; the lint test `lint_test_registration` checks that
# every test ends up with a TIMEOUT and LABELS.
function(remat_default_test_timeout seconds)
  get_property(tests DIRECTORY PROPERTY TESTS)
  foreach(test IN LISTS tests)
    get_test_property(${test} TIMEOUT timeout)
    if(NOT timeout)
      set_tests_properties(${test} PROPERTIES TIMEOUT ${seconds})
    endif()
  endforeach()
endfunction()
