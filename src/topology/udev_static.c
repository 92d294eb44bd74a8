/* hwloc's static library asks libudev about I/O devices, and Debian ships no static
 * libudev: these weak stand-ins let 'make static' link. They tell hwloc there is no udev
 * (udev_new() NULL), which it handles; srvscope reads no I/O devices anyway (topo__load
 * filters them out), so the dynamic build, where they stand in for libudev's as well,
 * loses nothing. */
#include <stddef.h>

struct udev;
struct udev_device;

__attribute__((weak)) struct udev *udev_new(void)
{
	return NULL;
}

__attribute__((weak)) struct udev *udev_unref(struct udev *u)
{
	return NULL;
}

__attribute__((weak)) struct udev_device *
udev_device_new_from_subsystem_sysname(struct udev *u, const char *subsystem, const char *name)
{
	return NULL;
}

__attribute__((weak)) struct udev_device *udev_device_unref(struct udev_device *d)
{
	return NULL;
}

__attribute__((weak)) const char *udev_device_get_property_value(struct udev_device *d,
								 const char *key)
{
	return NULL;
}
