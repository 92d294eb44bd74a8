/* C++ (and Rust) symbol demangling through libiberty, giving the same text as c++filt.
 * Internal to src/symbol. */
#ifndef SRVSCOPE_SYMBOL_DEMANGLE_H
#define SRVSCOPE_SYMBOL_DEMANGLE_H

/* A malloc'd demangled copy of name, or NULL when name is not a mangled symbol (the caller
 * then keeps using name). A symbol version suffix ("@@GLIBCXX_3.4") is kept as is. */
char *symbol__demangle(const char *name);

#endif
