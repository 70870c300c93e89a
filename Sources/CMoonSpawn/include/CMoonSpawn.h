// The CMoonSpawn module: moon's spawner (moon_spawn.h) and the Linux calls
// Swift's Glibc module does not import (moon_linux.h).
#include "moon_spawn.h"
#include "moon_linux.h"
