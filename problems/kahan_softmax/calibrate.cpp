// Standalone calibration of kahan_softmax's max_ulp (CALIBRATION.md): mirrors generators.cpp and the
// three host solutions' arithmetic and prints their max ulp error against fp64 per shape over seeds
// 1-10. Not part of the build (CMake compiles only reference.cpp and generators.cpp); run with
//   g++ -std=c++20 -O2 -march=native -Isrc -o /tmp/calib problems/kahan_softmax/calibrate.cpp && /tmp/calib
// The shapes and generator parameters below must match problem.toml.
#include <cmath>
#include <cstdio>
#include <vector>
#include <algorithm>
#include <cstdlib>
#include "core/random.h"
struct P { double top=0; long lead=256, every=0; double spikes=0, lo=0.6, hi=0.99, spread=0, depth=150; };
static std::vector<float> gen(const P& p, long rows, long cols, uint64_t seed) {
  std::vector<float> x(rows*cols);
  for (long i=0;i<rows*cols;++i){ long j=i%cols; auto r0=kb::random_block(seed,0,i,0), r1=kb::random_block(seed,0,i,1);
    double us=kb::uniform01_from_words(r0.x,r0.y), uk=kb::uniform01_from_words(r0.z,r0.w), uv=kb::uniform01_from_words(r1.x,r1.y);
    double v; if (j<p.lead||(p.every>0&&j%p.every==0)||us<p.spikes/cols) v=p.top; else if(uk<p.spread) v=p.top-(18+(p.depth-18)*uv);
    else v=p.top+kb::kb_log((p.lo+(p.hi-p.lo)*uv)*0x1p-24); int ex; std::frexp(std::max(std::fabs(p.top),p.depth),&ex); double q=std::ldexp(1.0,ex-24); x[i]=(float)(std::nearbyint(v/q)*q); }
  return x; }
static double ulp32(double e){ e=std::fabs(e); if(e<0x1p-126) return 0x1p-149; int ex; std::frexp(e,&ex); return std::ldexp(1.0, ex-1-23); }
int main(){
  struct S{long b,v; P p;}; std::vector<S> shapes={{32,4096,{}},{16,32768,{}},{8,131072,{}},{4,262144,{}},
   {32,4096,{100,256,0,8,0.6,0.99,0.1,150}},{16,32768,{0,1024,1024,64}},{8,131072,{100,256,4096,0,0.6,0.99,0.25,150}},{4,262144,{0,256,256,256}}};
  for (auto& s: shapes){ double worst[3]={0,0,0}, best_naive=1e30;
   for (uint64_t seed: {1,2,3,4,5,6,7,8,9,10}){ auto x=gen(s.p,s.b,s.v,seed); double w[3]={0,0,0};
    for(long r=0;r<s.b;++r){ const float* xr=&x[r*s.v]; float mx=-INFINITY; for(long j=0;j<s.v;++j) mx=std::fmax(mx,xr[j]);
     double dmx=mx, ds=0; for(long j=0;j<s.v;++j) ds+=std::exp((double)xr[j]-dmx);
     float part[256]; float ks[256], kc[256];
     for(int t=0;t<256;++t){ float sum=0,c=0,nsum=0; for(long j=t;j<s.v;j+=256){ float e=std::exp(xr[j]-mx); nsum+=e; float y=e-c, n=sum+y; c=(n-sum)-y; sum=n;} part[t]=nsum; ks[t]=sum; kc[t]=-c; }
     auto two=[](float a,float b,float&s,float&e){ s=a+b; float bb=s-a; e=(a-(s-bb))+(b-bb); };
     for(int wd=128;wd>0;wd/=2) for(int t=0;t<wd;++t){ part[t]+=part[t+wd]; float s1,e1; two(ks[t],ks[t+wd],s1,e1); e1+=kc[t]+kc[t+wd]; two(s1,e1,ks[t],kc[t]); }
     float tn=part[0], tk=ks[0]+kc[0]; double d64=0; for(long j=0;j<s.v;++j) d64+=(double)std::exp(xr[j]-mx);
     for(long j=0;j<s.v;++j){ double e=std::exp((double)xr[j]-dmx)/ds; if(e==0) continue; float ef=std::exp(xr[j]-mx);
       float g[3]={ef/tn, ef/tk, (float)((double)ef/d64)}; for(int k=0;k<3;++k){ double u=std::fabs(g[k]-e)/ulp32(e); if(k==2&&u>5&&getenv("DBG")) printf("x-mx=%.9g e=%.9g got=%.9g ef=%.9g exact=%.9g\n",xr[j]-mx,e,g[k],ef,std::exp((double)xr[j]-dmx)); w[k]=std::fmax(w[k],u);} } }
    for(int k=0;k<3;++k) worst[k]=std::fmax(worst[k],w[k]); best_naive=std::fmin(best_naive,w[0]); }
   printf("(%ld,%ld) top=%g lead=%ld every=%ld spikes=%g spread=%g: naive min-over-seeds %.2f max %.2f | kahan %.2f | fp64 %.2f\n", s.b,s.v,s.p.top,s.p.lead,s.p.every,s.p.spikes,s.p.spread,best_naive,worst[0],worst[1],worst[2]); }
}
