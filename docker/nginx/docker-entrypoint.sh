#!/bin/sh
# Entrypoint of local/nginx:1.27: the template step of the official image's
# /docker-entrypoint.sh (20-envsubst-on-templates.sh), same variables and defaults:
#   NGINX_ENVSUBST_TEMPLATE_DIR    (/etc/nginx/templates)
#   NGINX_ENVSUBST_TEMPLATE_SUFFIX (.template)
#   NGINX_ENVSUBST_OUTPUT_DIR      (/etc/nginx/conf.d)
#   NGINX_ENVSUBST_FILTER          (regex on variable names; empty = all)
# Only variables that are set in the environment are substituted, so nginx's own
# variables ($host, $uri, ...) survive the rendering.
set -eu

if [ "${1:-}" = nginx ] || [ "${1:-}" = nginx-debug ]; then
    template_dir=${NGINX_ENVSUBST_TEMPLATE_DIR:-/etc/nginx/templates}
    suffix=${NGINX_ENVSUBST_TEMPLATE_SUFFIX:-.template}
    output_dir=${NGINX_ENVSUBST_OUTPUT_DIR:-/etc/nginx/conf.d}
    filter=${NGINX_ENVSUBST_FILTER:-}
    # shellcheck disable=SC2016,SC2046
    defined_envs=$(printf '${%s} ' $(awk "END { for (name in ENVIRON) { print ( name ~ /${filter}/ ) ? name : \"\" } }" </dev/null))
    if [ -d "$template_dir" ]; then
        find "$template_dir" -follow -type f -name "*$suffix" -print | while read -r template; do
            relative_path=${template#"$template_dir/"}
            output_path=$output_dir/${relative_path%"$suffix"}
            mkdir -p "$(dirname "$output_path")"
            echo "$0: rendering $template to $output_path"
            envsubst "$defined_envs" <"$template" >"$output_path"
        done
    fi
fi

exec "$@"
