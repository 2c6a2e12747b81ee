#pragma once
// How the tests look at an error: run the code, expect an InputError, keep its one-line text.
#include <gtest/gtest.h>

#include <string>

#include "lockstep/core/error.hpp"

namespace lockstep {

// Runs `f`, expects an InputError, returns its full one-line message.
template <typename F>
std::string error_of(F f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no InputError thrown";
  return "";
}

// Runs `f`, expects an InputError, returns the field it names.
template <typename F>
std::string field_of(F f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.field();
  }
  ADD_FAILURE() << "no InputError thrown";
  return "";
}

}  // namespace lockstep
