/* prof_leaky.c as C++: its records come from new. */
#include "prof_leaky.c"
