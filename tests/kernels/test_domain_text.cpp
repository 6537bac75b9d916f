// The declared domain's one text form (kernel.h: domain_text, parse_domain;
// kernels/domain_text.cpp): what each term sets, the round trip, and the
// errors, which quote the term at fault.
#include <gtest/gtest.h>

#include <cfloat>
#include <stdexcept>
#include <string>

#include "normcheck/kernel.h"

namespace normcheck {
namespace {

TEST(DomainText, EachTermSetsItsField) {
  const InputRange d = parse_domain("eps>=1e-6 d=2..65536 |x|<=1e4 finite");
  EXPECT_EQ(d.min_eps, 1e-6f);  // rounded to float, as eps is
  EXPECT_EQ(d.min_d, 2);
  EXPECT_EQ(d.max_d, 65536);
  EXPECT_EQ(d.max_abs_x, 1e4);
  EXPECT_FALSE(d.sqrt_d_scaled);
  EXPECT_FALSE(d.handles_nonfinite);
  const InputRange scaled = parse_domain("|x|<=2^62/sqrt(d) d>=3");
  EXPECT_EQ(scaled.max_abs_x, 0x1p62);
  EXPECT_TRUE(scaled.sqrt_d_scaled);
  EXPECT_EQ(scaled.min_d, 3);
  EXPECT_EQ(scaled.max_d, InputRange{}.max_d);
  EXPECT_EQ(parse_domain("d<=8").max_d, 8);
}

TEST(DomainText, TheConditioningTerms) {
  const InputRange d = parse_domain("|mean|/sigma<=1e4 sigma>=2^-126 |x|>=2^-126");
  EXPECT_EQ(d.max_mean_over_sigma, 1e4);
  EXPECT_EQ(d.min_sigma, 0x1p-126);
  EXPECT_EQ(d.min_abs_x, 0x1p-126);
  EXPECT_TRUE(d.has_row_terms());
  EXPECT_FALSE(parse_domain("|x|>=1e-30 eps>=1e-5").has_row_terms());  // |x|>=M is a term on elements
  EXPECT_FALSE(InputRange{}.has_row_terms());
}

// `realistic` is kRealisticDomain's terms; a term beside it replaces the
// preset's value for its field, whatever their order.
TEST(DomainText, TheRealisticPreset) {
  const InputRange r = parse_domain("realistic");
  EXPECT_EQ(r, parse_domain(kRealisticDomain));
  EXPECT_EQ(r.min_eps, 1e-12f);
  EXPECT_FALSE(r.handles_nonfinite);
  EXPECT_EQ(r.min_abs_x, 0x1p-126);
  EXPECT_EQ(r.max_mean_over_sigma, 1e4);
  EXPECT_EQ(r.min_sigma, 0x1p-63);  // sigma^2 >= FLT_MIN
  EXPECT_EQ(domain_text(r), kRealisticDomain);  // printed as its terms
  const InputRange wider = parse_domain("eps>=1e-6 realistic |mean|/sigma<=1e3 d<=8192");
  EXPECT_EQ(wider.min_eps, 1e-6f);
  EXPECT_EQ(wider.max_mean_over_sigma, 1e3);
  EXPECT_EQ(wider.max_d, 8192);
  EXPECT_EQ(wider.min_sigma, 0x1p-63);
  // The base's fields the preset does not name stay.
  const InputRange based = parse_domain("realistic", {.max_abs_x = 0x1p62, .sqrt_d_scaled = true});
  EXPECT_EQ(based.max_abs_x, 0x1p62);
  EXPECT_TRUE(based.sqrt_d_scaled);
}

TEST(DomainText, TheDefaultIsAnyAndAnEmptyText) {
  EXPECT_EQ(domain_text(InputRange{}), "any");
  EXPECT_EQ(parse_domain("any"), InputRange{});
  EXPECT_EQ(parse_domain(""), InputRange{});
  EXPECT_EQ(parse_domain("  "), InputRange{});
}

TEST(DomainText, TermsReplaceTheBaseAndKeepTheRest) {
  const InputRange base{.max_abs_x = 0x1p62, .sqrt_d_scaled = true};
  const InputRange d = parse_domain("eps>=1e-5", base);
  EXPECT_EQ(d.min_eps, 1e-5f);
  EXPECT_EQ(d.max_abs_x, 0x1p62);
  EXPECT_TRUE(d.sqrt_d_scaled);
  const InputRange flat = parse_domain("|x|<=100", base);
  EXPECT_EQ(flat.max_abs_x, 100);
  EXPECT_FALSE(flat.sqrt_d_scaled);
}

TEST(DomainText, PrintsWhatParsesBack) {
  const InputRange domains[] = {
      {},
      {.max_abs_x = 0x1p62, .sqrt_d_scaled = true},
      {.max_abs_x = 0x1p124},
      {.max_abs_x = 65504, .handles_nonfinite = false, .min_eps = 1e-12f, .min_d = 16, .max_d = 4096},
      {.min_eps = 1e-6f},
      {.min_d = 2},
      {.max_d = 1 << 20},
      {.max_abs_x = 0.1},
      {.min_abs_x = 0x1p-126, .max_mean_over_sigma = 1e4, .min_sigma = 0x1p-126},
      {.min_abs_x = 1e-20, .max_mean_over_sigma = 0.5, .min_sigma = 3},
  };
  for (const InputRange& d : domains) {
    const std::string text = domain_text(d);
    EXPECT_EQ(parse_domain(text), d) << text;
  }
  EXPECT_EQ(domain_text({.max_abs_x = 0x1p62, .sqrt_d_scaled = true, .min_eps = 1e-6f, .min_d = 1, .max_d = 65536}),
            "eps>=1e-06 d<=65536 |x|<=2^62/sqrt(d)");  // d>=1 is the default
  EXPECT_EQ(domain_text({.handles_nonfinite = false, .min_d = 4}), "d>=4 finite");
}

// Each malformed text is refused with a message that quotes the term.
TEST(DomainText, RefusesWhatItCannotRead) {
  const char* bad[][2] = {
      {"eps>=-1", "eps>=-1"},           {"eps>=x", "eps>=x"},
      {"eps>=1e39", "eps>=1e39"},       {"eps>=nan", "eps>=nan"},
      {"d=0..4", "d=0..4"},             {"d=4", "d=4"},
      {"d=1..2.5", "d=1..2.5"},         {"|x|<=0", "|x|<=0"},
      {"|x|<=inf", "|x|<=inf"},         {"|x|<1", "|x|<1"},
      {"eps>0", "eps>0"},               {"eps>=1 eps>=2", "eps>=2"},
      {"d=1..4 d<=8", "d<=8"},          {"any finite", "any"},
      {"|x|<=2^2000", "|x|<=2^2000"},   {"eps>=1e-6,d=1..4", "eps>=1e-6,d=1..4"},
      {"|x|>=0", "|x|>=0"},             {"|x|>=-1", "|x|>=-1"},
      {"sigma>=0", "sigma>=0"},         {"|mean|/sigma<=0", "|mean|/sigma<=0"},
      {"|mean|/sigma<=x", "|mean|/sigma<=x"}, {"sigma>=1 sigma>=2", "sigma>=2"},
      {"realistic realistic", "realistic"},   {"realistic any", "any"},
      {"Realistic", "Realistic"},       {"|mean|/sigma<1e4", "|mean|/sigma<1e4"},
  };
  for (const auto& [text, term] : bad) {
    try {
      parse_domain(text);
      ADD_FAILURE() << "'" << text << "' was taken";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("'") + term + "'"), std::string::npos)
          << text << ": " << e.what();
    }
  }
  try {
    parse_domain("|x|<=1 |x|>=2");
    ADD_FAILURE() << "an empty |x| range was taken";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("no nonzero x has 2 <= |x| <= 1"), std::string::npos) << e.what();
  }
  try {
    parse_domain("d>=8 d<=4");
    ADD_FAILURE() << "an empty d range was taken";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("8..4 is empty"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace normcheck
