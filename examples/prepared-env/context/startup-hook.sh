# Sourced by bash before the trial starts, inside the prepared environment: python3 here is the
# environment's, with runtime_packages importable. model_def.py checks that the trial runs in the
# very interpreter the hook saw.
export PREPARED_HOOK_PREFIX="$(python3 -c 'import sys; print(sys.prefix)')"
python3 -c 'import prepared_features' || return 1
echo "startup-hook.sh: python3 is $(command -v python3), prepared_features imports"
