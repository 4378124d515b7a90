#include "ext.h"
/* placeholder */
