-- wrk: PUT one collection of ten videos, over and over (perf/bench_durability.py).
wrk.method = "PUT"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"videos":["dQw4w9WgXcQ","9bZkp7q19f0","kJQP7kiw5Fk","JGwWNGJdvx8","OPf0YbXqDm0",'
  .. '"fRh_vgS2dFE","CevxZvSJLk8","RgKAFK5djSk","YQHsXMglC9A","hT_nvWreIhg"]}'
