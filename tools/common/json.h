/* json.h - the one JSON helper the tools share: a string, quoted and escaped. */
#ifndef TOOLS_JSON_H
#define TOOLS_JSON_H

#include <stdio.h>

static inline void json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

#endif
