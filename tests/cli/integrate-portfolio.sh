# integrate: a portfolio's reserves equal the per-policy reserves, bit for bit;
# text input; concatenated streams give one output group each.
cat > pol.txt <<'T'
# g r x
10 65 35
0 60 70
15 67 50.5
T
gen-input integrate --from-text pol.txt --steps 1,2,1 | integrate -o all.nps
i=0
while read -r g r x; do
  case $g in \#*) continue ;; esac
  gen-input integrate --g $g --r $r --x $x --steps 1,2,1 | integrate -o one$i.nps
  i=$((i + 1))
done < pol.txt
# Concatenate the three single results' reserve rows and compare with the batch.
for j in 0 1 2; do inspect --values 121 one$j.nps | awk '/reserve  f8/ {f = 1} f && /values/ {$1 = ""; print; exit}'; done > singles.txt
inspect --values 363 all.nps | awk '/reserve  f8/ {f = 1} f && /values/ {$1 = ""; print; exit}' | tr ' ' '\n' | grep -v '^$' > batch.txt
tr ' ' '\n' < singles.txt | grep -v '^$' > singles1.txt
[ "$(wc -l < batch.txt)" = 363 ] || fail "batch has $(wc -l < batch.txt) values"
cmp batch.txt singles1.txt || fail "portfolio rows differ from single-policy results"
# Concatenated inputs: one output group per input group, same values.
gen-input integrate --g 10 --r 65 --x 35 --steps 1,2,1 > a.nps
gen-input integrate --g 0 --r 60 --x 70 --steps 1,2,1 > b.nps
cat a.nps b.nps | integrate -o ab.nps
[ "$(inspect ab.nps | grep -c 'reserve0')" = 2 ] || fail "want two groups"
# A random portfolio is reproducible from its seed.
gen-input integrate --portfolio 5 --seed 9 --steps 1,1,1 | integrate -o p1.nps
gen-input integrate --portfolio 5 --seed 9 --steps 1,1,1 | integrate | verify --against p1.nps --rtol 0 --atol 0
