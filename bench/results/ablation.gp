if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) { set terminal pngcairo size 1100,450 font ',10' } else { set terminal png size 1100,450 }
set output 'ablation.png'
set title 'Ablation (llama3): per-token mask time, step-min mean (log scale)'
set logscale y
set grid ytics
set style fill solid 0.8
set boxwidth 0.20
set xtics font ',9'
set ylabel 'µs'
set xrange [-0.6:6.6]
set key top right
plot 'ablation.dat' index 0 using ($1 + -0.300):2:xtic(4) with boxes lc 1 title 'json', 'ablation.dat' index 1 using ($1 + -0.100):2 with boxes lc 2 title 'go', 'ablation.dat' index 2 using ($1 + 0.100):2 with boxes lc 3 title 'java', 'ablation.dat' index 3 using ($1 + 0.300):2 with boxes lc 4 title 'python'
