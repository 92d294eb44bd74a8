/* The subcommands: one file each under src/cmd/, each parses its own options. */
#ifndef SRVSCOPE_CMD_CMD_H
#define SRVSCOPE_CMD_CMD_H

int cmd_stacks(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_blocking(int argc, char **argv);
int cmd_sched(int argc, char **argv);
int cmd_flame(int argc, char **argv);
int cmd_timeline(int argc, char **argv);
int cmd_load(int argc, char **argv);
int cmd_model(int argc, char **argv);
int cmd_critical(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_clone(int argc, char **argv);
int cmd_cpu(int argc, char **argv);
int cmd_topology(int argc, char **argv);
int cmd_serve(int argc, char **argv);

#endif
