#pragma once

#include <boost/math/policies/policy.hpp>

namespace gate::metrics {

// The Boost.Math error policy of every distribution gate evaluates. The
// callers check their arguments first and throw their own errors (a
// std::domain_error, or gate::Error for a count from a report), so whatever
// Boost would still call an error comes back as a value (NaN, ±inf, a
// clamped probability) with errno set, never as an exception from inside
// the library.
using MathPolicy = boost::math::policies::policy<
    boost::math::policies::domain_error<boost::math::policies::errno_on_error>,
    boost::math::policies::pole_error<boost::math::policies::errno_on_error>,
    boost::math::policies::overflow_error<boost::math::policies::errno_on_error>,
    boost::math::policies::evaluation_error<boost::math::policies::errno_on_error>,
    boost::math::policies::rounding_error<boost::math::policies::errno_on_error>>;

} // namespace gate::metrics
