// report.html as a browser shows it: headless Chromium (Debian `chromium`,
// offline, a fresh profile) takes a screenshot of a --quick report, and every
// plot area (found by its frame colour, #b4a0dc, which the page uses for
// nothing else) must hold drawn pixels: axes and, in colour, the data. The
// negative control: the same page with every plot replaced by a blank SVG must
// be found blank by the same check.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "normcheck_cli.h"
#include "png_decode.h"

namespace normcheck {
namespace {

namespace fs = std::filesystem;
using test_support::Image;
using test_support::read_whole_file;
using test_support::scratch_dir;

// Tall enough for the verdict table and the first dozen plots at 1280 wide.
constexpr int kWidth = 1280, kHeight = 14000;

Image screenshot(const fs::path& html, const std::string& name) {
  const fs::path png = scratch_dir() / (name + ".png"), profile = scratch_dir() / (name + "_profile");
  fs::remove_all(profile);
  fs::remove(png);
  const std::string command =
      "chromium --headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update "
      "--disable-sync --no-first-run --hide-scrollbars --user-data-dir=" + profile.string() +
      " --window-size=" + std::to_string(kWidth) + "," + std::to_string(kHeight) + " --screenshot=" + png.string() +
      " file://" + fs::absolute(html).string() + " >" + (scratch_dir() / (name + ".log")).string() + " 2>&1";
  const int status = std::system(command.c_str());
  if (status != 0 || !fs::exists(png))
    throw std::runtime_error("chromium failed (scripts/setup.sh installs Debian's chromium): " + command + "\n" +
                             read_whole_file(scratch_dir() / (name + ".log")));
  return test_support::decode_png(read_whole_file(png));
}

// #b4a0dc, within what colour management may shift it by.
bool frame_colour(const uint8_t* p) {
  return std::abs(p[0] - 0xb4) <= 6 && std::abs(p[1] - 0xa0) <= 6 && std::abs(p[2] - 0xdc) <= 6;
}

struct Area {
  int x0, y0, x1, y1;  // the plot image inside the frame, half-open
  int drawn = 0;       // pixels that are not background white
  int coloured = 0;    // pixels of a saturated colour: the data series
};

// Frames are 776 pixels wide with a 4-pixel border and 4 of padding: a row of
// the screenshot with a run of >= 700 frame pixels is a frame's top or bottom
// edge; consecutive such rows form one edge band; bands pair up top, bottom.
std::vector<Area> plot_areas(const Image& img) {
  struct Band {
    int y0, y1, x0, x1;
  };
  std::vector<Band> bands;
  for (int y = 0; y < img.height; ++y) {
    int best = 0, best_x0 = 0;
    for (int x = 0, run = 0; x < img.width; ++x) {
      run = frame_colour(img.at(x, y)) ? run + 1 : 0;
      if (run > best) {
        best = run;
        best_x0 = x - run + 1;
      }
    }
    if (best < 700) continue;
    if (!bands.empty() && bands.back().y1 == y) ++bands.back().y1;
    else bands.push_back({y, y + 1, best_x0, best_x0 + best});
  }
  std::vector<Area> areas;
  for (std::size_t i = 0; i + 1 < bands.size(); i += 2) {
    Area a{bands[i].x0 + 8, bands[i].y1 + 4, bands[i].x1 - 8, bands[i + 1].y0 - 4};
    for (int y = a.y0; y < a.y1; ++y)
      for (int x = a.x0; x < a.x1; ++x) {
        const uint8_t* p = img.at(x, y);
        const int lo = std::min({p[0], p[1], p[2]}), hi = std::max({p[0], p[1], p[2]});
        a.drawn += lo < 225;
        a.coloured += hi - lo > 80;
      }
    areas.push_back(a);
  }
  return areas;
}

// A plot holds a drawing: at least 1 % of its pixels drawn (axes, grid, points)
// and 100 or more in colour (gnuplot draws the series in colour, the frame and
// text in black and grey). An empty white SVG has 0 of both.
bool drawn(const Area& a) {
  const long pixels = static_cast<long>(a.x1 - a.x0) * (a.y1 - a.y0);
  return a.drawn * 100L >= pixels && a.coloured >= 100;
}

TEST(ReportScreenshot, EveryPlotAreaHoldsADrawing) {
  const fs::path out = scratch_dir() / "screenshot";
  fs::remove_all(out);
  const auto run = test_support::run_normcheck("report --quick --out " + out.string());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const fs::path html = out / "report.html";

  const Image shot = screenshot(html, "report");
  const auto areas = plot_areas(shot);
  // The page's figures before kHeight: the verdict table takes ~3000 pixels and
  // each plot ~470, so at least ten are in the screenshot.
  ASSERT_GE(areas.size(), 10u) << "plot frames found in a " << shot.width << "x" << shot.height << " screenshot";
  std::cout << areas.size() << " plot areas in the screenshot\n";
  for (const Area& a : areas) {
    std::cout << "  y = " << a.y0 << ".." << a.y1 << ": " << a.drawn << " drawn, " << a.coloured << " coloured of "
              << (a.x1 - a.x0) * (a.y1 - a.y0) << "\n";
    EXPECT_TRUE(drawn(a)) << "blank plot at y = " << a.y0 << ": " << a.drawn << " drawn, " << a.coloured
                          << " coloured pixels of " << (a.x1 - a.x0) * (a.y1 - a.y0);
  }

  // Negative control: every plot replaced by a blank SVG of the same size.
  const std::string blank_svg =
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"760\" height=\"430\"><rect width=\"760\" height=\"430\" "
      "fill=\"white\"/></svg>";
  static constexpr char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string b64;
  for (std::size_t i = 0; i < blank_svg.size(); i += 3) {
    unsigned v = static_cast<unsigned char>(blank_svg[i]) << 16;
    if (i + 1 < blank_svg.size()) v |= static_cast<unsigned char>(blank_svg[i + 1]) << 8;
    if (i + 2 < blank_svg.size()) v |= static_cast<unsigned char>(blank_svg[i + 2]);
    b64 += kB64[v >> 18];
    b64 += kB64[(v >> 12) & 63];
    b64 += i + 1 < blank_svg.size() ? kB64[(v >> 6) & 63] : '=';
    b64 += i + 2 < blank_svg.size() ? kB64[v & 63] : '=';
  }
  // (std::regex recurses per character: too deep for a plot's base64.)
  std::string page = read_whole_file(html);
  const std::string prefix = "data:image/svg+xml;base64,";
  int replaced = 0;
  for (std::size_t at = page.find(prefix); at != std::string::npos; at = page.find(prefix, at + 1)) {
    const std::size_t start = at + prefix.size(), end = page.find('"', start);
    page.replace(start, end - start, b64);
    ++replaced;
  }
  ASSERT_GE(replaced, 10);
  const fs::path blank_html = scratch_dir() / "blank_plots.html";
  std::ofstream(blank_html) << page;
  const auto blank_areas = plot_areas(screenshot(blank_html, "blank"));
  ASSERT_GE(blank_areas.size(), 10u);
  for (const Area& a : blank_areas) EXPECT_FALSE(drawn(a)) << "a blank plot passed the check at y = " << a.y0;
}

}  // namespace
}  // namespace normcheck
