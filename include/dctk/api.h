/* DCTK_API marks what the libraries export. They are built with
 * -fvisibility=hidden, and their static archives are one relocatable object
 * each in which every hidden symbol is made local, so a program sees the
 * declarations marked here and nothing else (no helper name can clash with
 * the program's own). Every public header includes this one through status.h. */
#ifndef DCTK_API_H
#define DCTK_API_H

#if defined(__GNUC__) || defined(__clang__)
#define DCTK_API __attribute__((visibility("default")))
#else
#define DCTK_API
#endif

#endif
