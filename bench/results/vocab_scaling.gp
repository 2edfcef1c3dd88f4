if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) { set terminal pngcairo size 1100,450 font ',10' } else { set terminal png size 1100,450 }
set output 'vocab_scaling.png'
set multiplot layout 1,2 title 'Scaling with vocabulary size (first N ids of qwen3; corpus re-tokenized greedily)'
set key top left
set grid
set xrange [0:*]
set yrange [0:*]
set xlabel 'vocabulary size (ids)'
set format x '%.0s%c'
set ylabel 'per-token mask time, µs (step-min mean solid, p99 dashed)'
plot 'vocab_scaling.dat' index 0 using 1:2 with linespoints lw 2 lc 1 title 'json mean', '' index 0 using 1:3 with linespoints dt 2 lc 1 title 'json p99', 'vocab_scaling.dat' index 1 using 1:2 with linespoints lw 2 lc 2 title 'go mean', '' index 1 using 1:3 with linespoints dt 2 lc 2 title 'go p99', 'vocab_scaling.dat' index 2 using 1:2 with linespoints lw 2 lc 3 title 'java mean', '' index 2 using 1:3 with linespoints dt 2 lc 3 title 'java p99', 'vocab_scaling.dat' index 3 using 1:2 with linespoints lw 2 lc 4 title 'python mean', '' index 3 using 1:3 with linespoints dt 2 lc 4 title 'python p99'
set ylabel 'eager preprocessing, CPU s'
plot 'vocab_scaling.dat' index 0 using 1:4 with linespoints lw 2 lc 1 title 'json', 'vocab_scaling.dat' index 1 using 1:4 with linespoints lw 2 lc 2 title 'go', 'vocab_scaling.dat' index 2 using 1:4 with linespoints lw 2 lc 3 title 'java', 'vocab_scaling.dat' index 3 using 1:4 with linespoints lw 2 lc 4 title 'python'
unset multiplot
