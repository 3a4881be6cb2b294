#!/usr/bin/env bash
# booster_speed's cases with numba's code generated for other CPUs, on this machine, alone
cd "$(dirname "$0")/../../.."
for cpu in host znver1 generic; do
  dir=/tmp/nbcache_$cpu; rm -rf $dir; mkdir -p $dir
  if [ $cpu = host ]; then env=""; else env="NUMBA_CPU_NAME=$cpu"; fi
  echo "=== $cpu"
  env $env NUMBA_CACHE_DIR=$dir .venv/bin/python benchmarks/booster_speed.py --data ohsumed,mq2008 \
     --boosters rb-c,rankboost+,mpboost-logdd,ndcg_boost,adarank --rounds 300 --repeat 3 --json cpu_$cpu.json
done
