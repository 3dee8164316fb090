/* Private to src/report: cairo, opened on the first figure rather than when
 * the program starts. cairo and what it pulls in (fontconfig, freetype, X11,
 * xcb, pixman, png: 15 libraries) cost every command about 2.5 ms of dynamic
 * linking, and most commands (a write, a sweep without figures) never draw.
 *
 * Each cairo function the report calls is reached through dctk_cairo, filled
 * by dctk_cairo_load (fig_render calls it): the names below stay the cairo
 * names, so the drawing code reads as plain cairo. A function used here for
 * the first time is added to DCTK_CAIRO_FUNCS. */
#ifndef DCTK_REPORT_CAIRO_LAZY_H
#define DCTK_REPORT_CAIRO_LAZY_H

#include <cairo-pdf.h>
#include <cairo-svg.h>
#include <cairo.h>

#include "dctk/status.h"

#define DCTK_CAIRO_FUNCS(X)                                                                                        \
    X(cairo_arc) X(cairo_clip) X(cairo_close_path) X(cairo_create) X(cairo_destroy) X(cairo_fill)               \
    X(cairo_get_source) X(cairo_image_surface_create) X(cairo_image_surface_get_data)                          \
    X(cairo_image_surface_get_stride) X(cairo_line_to) X(cairo_move_to) X(cairo_new_path) X(cairo_paint)       \
    X(cairo_pattern_set_filter) X(cairo_pdf_surface_create_for_stream) X(cairo_rectangle) X(cairo_restore)     \
    X(cairo_rotate) X(cairo_save) X(cairo_scale) X(cairo_select_font_face) X(cairo_set_dash)                   \
    X(cairo_set_font_size) X(cairo_set_line_width) X(cairo_set_source_rgb) X(cairo_set_source_rgba)            \
    X(cairo_set_source_surface) X(cairo_show_text) X(cairo_status) X(cairo_status_to_string) X(cairo_stroke)   \
    X(cairo_surface_destroy) X(cairo_surface_finish) X(cairo_surface_flush) X(cairo_surface_mark_dirty)        \
    X(cairo_surface_status) X(cairo_surface_write_to_png_stream) X(cairo_svg_surface_create_for_stream)        \
    X(cairo_svg_surface_restrict_to_version) X(cairo_text_extents) X(cairo_translate)

typedef struct {
#define DCTK_CAIRO_MEMBER(f) __typeof__(f) *f;
    DCTK_CAIRO_FUNCS(DCTK_CAIRO_MEMBER)
#undef DCTK_CAIRO_MEMBER
} dctk_cairo_api;

extern dctk_cairo_api dctk_cairo;

/* Open libcairo and find every function of DCTK_CAIRO_FUNCS, once per
 * process; a later call returns the first call's outcome. */
dctk_status dctk_cairo_load(void);

/* Only the loader sees the members under their own names. */
#ifndef DCTK_CAIRO_LOADER
#define cairo_arc (*dctk_cairo.cairo_arc)
#define cairo_clip (*dctk_cairo.cairo_clip)
#define cairo_close_path (*dctk_cairo.cairo_close_path)
#define cairo_create (*dctk_cairo.cairo_create)
#define cairo_destroy (*dctk_cairo.cairo_destroy)
#define cairo_fill (*dctk_cairo.cairo_fill)
#define cairo_get_source (*dctk_cairo.cairo_get_source)
#define cairo_image_surface_create (*dctk_cairo.cairo_image_surface_create)
#define cairo_image_surface_get_data (*dctk_cairo.cairo_image_surface_get_data)
#define cairo_image_surface_get_stride (*dctk_cairo.cairo_image_surface_get_stride)
#define cairo_line_to (*dctk_cairo.cairo_line_to)
#define cairo_move_to (*dctk_cairo.cairo_move_to)
#define cairo_new_path (*dctk_cairo.cairo_new_path)
#define cairo_paint (*dctk_cairo.cairo_paint)
#define cairo_pattern_set_filter (*dctk_cairo.cairo_pattern_set_filter)
#define cairo_pdf_surface_create_for_stream (*dctk_cairo.cairo_pdf_surface_create_for_stream)
#define cairo_rectangle (*dctk_cairo.cairo_rectangle)
#define cairo_restore (*dctk_cairo.cairo_restore)
#define cairo_rotate (*dctk_cairo.cairo_rotate)
#define cairo_save (*dctk_cairo.cairo_save)
#define cairo_scale (*dctk_cairo.cairo_scale)
#define cairo_select_font_face (*dctk_cairo.cairo_select_font_face)
#define cairo_set_dash (*dctk_cairo.cairo_set_dash)
#define cairo_set_font_size (*dctk_cairo.cairo_set_font_size)
#define cairo_set_line_width (*dctk_cairo.cairo_set_line_width)
#define cairo_set_source_rgb (*dctk_cairo.cairo_set_source_rgb)
#define cairo_set_source_rgba (*dctk_cairo.cairo_set_source_rgba)
#define cairo_set_source_surface (*dctk_cairo.cairo_set_source_surface)
#define cairo_show_text (*dctk_cairo.cairo_show_text)
#define cairo_status (*dctk_cairo.cairo_status)
#define cairo_status_to_string (*dctk_cairo.cairo_status_to_string)
#define cairo_stroke (*dctk_cairo.cairo_stroke)
#define cairo_surface_destroy (*dctk_cairo.cairo_surface_destroy)
#define cairo_surface_finish (*dctk_cairo.cairo_surface_finish)
#define cairo_surface_flush (*dctk_cairo.cairo_surface_flush)
#define cairo_surface_mark_dirty (*dctk_cairo.cairo_surface_mark_dirty)
#define cairo_surface_status (*dctk_cairo.cairo_surface_status)
#define cairo_surface_write_to_png_stream (*dctk_cairo.cairo_surface_write_to_png_stream)
#define cairo_svg_surface_create_for_stream (*dctk_cairo.cairo_svg_surface_create_for_stream)
#define cairo_svg_surface_restrict_to_version (*dctk_cairo.cairo_svg_surface_restrict_to_version)
#define cairo_text_extents (*dctk_cairo.cairo_text_extents)
#define cairo_translate (*dctk_cairo.cairo_translate)
#endif

#endif
