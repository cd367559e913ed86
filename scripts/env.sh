# Sourced by tessera's scripts: what Open MPI needs on this kind of machine.
# Running as root (containers, CI) needs explicit consent; more ranks than cores
# need oversubscription.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
# tessera gives the cores a plan leaves free to the working ranks as threads; binding
# each rank to one core (Open MPI's default for small runs) would forbid that.
export OMPI_MCA_hwloc_base_binding_policy=none
