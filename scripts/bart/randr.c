#include <stdio.h>
#include <stdlib.h>
int main(){ unsigned int s=1; for(int i=0;i<6;i++) printf("%d\n", rand_r(&s)); unsigned int st=1; int lim=32; int div=RAND_MAX/(lim+1); for(int i=0;i<10;i++){int r; do{ r=rand_r(&st)/div;}while(r>lim); printf("lim %d\n", r);} }
